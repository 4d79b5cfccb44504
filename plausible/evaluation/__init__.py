"""Testing a classifier against noisy labels (Su 2024).

The truth behind the labels is uncertain, so the classifier's accuracy, precision, recall,
false-alarm rate and F-score are posterior quantities too. The public face:

* label likelihoods and posteriors: :func:`label_likelihood`, :func:`label_log_likelihood`
  (Su's known-parameter model), :func:`label_posterior`, :func:`error_rate`;
* binary metrics: :func:`algorithm_ratios` (Algorithm 1), :func:`algorithm_sampling`
  (Algorithm 2), :func:`algorithm_labels` (Algorithm 3), :func:`full_bayes`, their analytic
  posteriors (:func:`uv_moments`, :func:`posterior_summary`, :func:`accuracy_posterior`,
  :func:`precision_posterior`, :func:`ratio_posterior`, :func:`operating_point_density`,
  :func:`precision_recall_density`), :func:`sampled_metrics` and :func:`empirical_metrics`;
* multi-class: :func:`algorithm_multiclass` (Algorithm 4) and the joint Gibbs sampler of the
  classes and the confusion matrix, :func:`confusion_gibbs`;
* credible regions on a grid or from samples: :func:`mmse`, :func:`map_estimate`,
  :func:`hdr_mask`, :func:`hdr_interval`, :func:`hdr_samples`;
* baselines and information: :func:`labeler_summary`, :func:`mutual_information`,
  :func:`symmetric_mutual_information`, :func:`equivalent_error`, :func:`labelers_to_match`;
* the Bayesian testing model (the classifier's prediction observed):
  :func:`build_model`, :func:`metrics_from_trace`;
* training on noisy labels: the :mod:`noisy_logistic` functions (``fit_ml``, ``fit_mmse``,
  ``fit_argmax``, ``fit_replicated``, ``fit_per_labeler``, ``predict_proba``);
* the seeded studies of the acceptance criteria: :func:`binary_seed_study`,
  :func:`binary_mae`, :func:`multiclass_coverage_study`, :func:`coverage_rate`.

Su's simulated setting is :func:`plausible.data.simulate_su`.
"""

from plausible.maths.fallibility import error_rate, label_likelihood, label_log_likelihood
from plausible.evaluation import noisy_logistic
from plausible.evaluation.binary import (
    METRICS,
    accuracy_posterior,
    algorithm_labels,
    algorithm_ratios,
    algorithm_sampling,
    empirical_metrics,
    full_bayes,
    label_posterior,
    operating_point_density,
    posterior_summary,
    precision_posterior,
    precision_recall_density,
    ratio_posterior,
    sampled_metrics,
    uv_moments,
)
from plausible.evaluation.confusion_gibbs import ConfusionGibbsResult, confusion_gibbs
from plausible.evaluation.credible_regions import hdr_interval, hdr_mask, hdr_samples, map_estimate, mmse
from plausible.evaluation.labeler_baselines import labeler_summary
from plausible.evaluation.model import build_model, metrics_from_trace
from plausible.evaluation.multiclass import MulticlassResult, algorithm_multiclass, sampled_confusion_counts
from plausible.evaluation.mutual_information import (
    binary_entropy,
    equivalent_error,
    labelers_to_match,
    mutual_information,
    symmetric_mutual_information,
)
from plausible.evaluation.studies import binary_mae, binary_seed_study, coverage_rate, multiclass_coverage_study

__all__ = [
    "METRICS",
    "ConfusionGibbsResult",
    "MulticlassResult",
    "accuracy_posterior",
    "algorithm_labels",
    "algorithm_multiclass",
    "algorithm_ratios",
    "algorithm_sampling",
    "binary_entropy",
    "binary_mae",
    "binary_seed_study",
    "build_model",
    "confusion_gibbs",
    "coverage_rate",
    "empirical_metrics",
    "equivalent_error",
    "error_rate",
    "full_bayes",
    "hdr_interval",
    "hdr_mask",
    "hdr_samples",
    "label_likelihood",
    "label_log_likelihood",
    "label_posterior",
    "labeler_summary",
    "labelers_to_match",
    "map_estimate",
    "metrics_from_trace",
    "mmse",
    "multiclass_coverage_study",
    "mutual_information",
    "noisy_logistic",
    "operating_point_density",
    "posterior_summary",
    "precision_posterior",
    "precision_recall_density",
    "ratio_posterior",
    "sampled_confusion_counts",
    "sampled_metrics",
    "symmetric_mutual_information",
    "uv_moments",
]
