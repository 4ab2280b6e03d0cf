"""Console scripts: SVM-struct-compatible command-line tools."""
