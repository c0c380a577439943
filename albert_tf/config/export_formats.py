"""What `albert-export` writes (names only: no TensorFlow here, so the command parses its
flags without loading it)."""

# `albert-export --format`: a raw-text SavedModel, a LiteRT (TFLite) file taking ids, the TF
# Hub text pair (preprocessor and encoder SavedModels), an ONNX model taking ids.
EXPORT_FORMATS = ("saved_model", "tflite", "hub", "onnx")
# `albert-export --format tflite --quantize`: float32, float16 weights, int8 weights with
# dynamic-range activations, full-integer int8.
QUANTIZATIONS = ("none", "float16", "dynamic_int8", "int8")
