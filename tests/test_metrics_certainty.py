"""Certainty metrics on hand-computed cases (ties go to the lowest class index)."""

from itertools import combinations

import numpy as np
import pytest
import xarray as xr

from hand_draws import DRAWS, hand_plausibility
from plausible.metrics import (
    annotation_certainty,
    expected_group,
    group_certainty,
    label_certainty,
    point_estimate,
    set_options,
)
from plausible.metrics import certainty as certainty_module

