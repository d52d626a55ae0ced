"""The Elasticsearch sink (Confluent's ``kafka-connect-elasticsearch``):
``ElasticsearchSinkConnector`` writes records as documents into Elasticsearch or OpenSearch
indices or data streams, in bulk, with the Kafka offset as external version."""

from sluice.connectors.elasticsearch.task import ElasticsearchSinkConnector, ElasticsearchSinkTask

__all__ = ["ElasticsearchSinkConnector", "ElasticsearchSinkTask"]
