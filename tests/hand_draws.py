"""Two items x three classes x four draws (one chain), written out by hand, with ties; shared
by the hand-computed metric tests. Per draw (ties go to the lowest class index):

    top-1:  item 0: 0, 0, 1, 0        item 1: 2, 1, 2, 0
    top-2:  item 0: {0,1} {0,1} {1,2} {0,2}    item 1: {0,2} {1,2} {0,2} {0,1}
    full rankings: item 0 [0,1,2] [0,1,2] [1,2,0] [0,2,1] | item 1 [2,0,1] [1,2,0] [2,0,1] [0,1,2]
"""

import numpy as np
import xarray as xr

DRAWS = np.array(
    [
        # item 0                 item 1
        [[0.50, 0.30, 0.20], [0.1, 0.1, 0.8]],
        [[0.40, 0.40, 0.20], [0.1, 0.6, 0.3]],
        [[0.20, 0.50, 0.30], [0.2, 0.2, 0.6]],
        [[0.45, 0.10, 0.45], [1 / 3, 1 / 3, 1 / 3]],
    ]
)


def hand_plausibility() -> xr.DataArray:
    return xr.DataArray(
        DRAWS[np.newaxis],
        dims=("chain", "draw", "item", "class"),
        coords={"chain": [0], "draw": np.arange(4), "item": ["x0", "x1"], "class": ["a", "b", "c"]},
        name="plausibility",
    )
