"""DAG pipelines of models and custom nodes (``pipeline_config_list``)."""
