# Sluice's container image: a distributed worker configured the way Confluent's
# cp-kafka-connect image is, by CONNECT_* environment variables (docs/container.md):
#
#   docker build -t sluice .
#   docker run -p 8083:8083 -e CONNECT_BOOTSTRAP_SERVERS=broker:9092 -e CONNECT_GROUP_ID=connect \
#     -e CONNECT_CONFIG_STORAGE_TOPIC=connect-configs -e CONNECT_OFFSET_STORAGE_TOPIC=connect-offsets \
#     -e CONNECT_STATUS_STORAGE_TOPIC=connect-status \
#     -e CONNECT_KEY_CONVERTER=org.apache.kafka.connect.json.JsonConverter \
#     -e CONNECT_VALUE_CONVERTER=org.apache.kafka.connect.json.JsonConverter \
#     -e CONNECT_REST_ADVERTISED_HOST_NAME=connect-1 sluice
FROM python:3.11-slim-bookworm

# Spark runs the tasks: it needs a Java runtime (17, as the project is tested with).
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/sluice
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir . \
 && useradd --system --create-home --home-dir /home/appuser appuser \
 && mkdir -p /usr/share/java /home/appuser/.cache/sluice \
 && chown -R appuser /home/appuser

USER appuser
ENV CONNECT_PLUGIN_PATH=/usr/share/java \
    SLUICE_CACHE=/home/appuser/.cache/sluice
EXPOSE 8083
ENTRYPOINT ["sluice", "distributed", "--from-env"]
