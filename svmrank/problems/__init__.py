"""Problems: one module per model family, each a most-violated-constraint oracle."""
