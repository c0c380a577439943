"""SavedModel export for serving: raw-text, ids and fill-mask signatures (see `saved_model`)."""

from albert_tf.export.loading import ExportError, load_saved_model
from albert_tf.export.saved_model import ExportOptions, export_saved_model

__all__ = ["ExportError", "ExportOptions", "export_saved_model", "load_saved_model"]
