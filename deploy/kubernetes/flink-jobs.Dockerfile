# The image both Flink jobs run from: Flink 2.2 on Java 17, the S3 file system plugin, and the two shaded job
# jars. Build it from the repository's root after `./mvnw -pl flink-click-job,batch-reconcile -am package -DskipTests`:
#
#     docker build -f deploy/kubernetes/flink-jobs.Dockerfile -t tally-flink-jobs:0.1.0 .
#
# The jars sit outside /opt/flink/usrlib on purpose: Flink puts every jar there on each application's class
# path, and the reconcile jar carries its own copy of the click job's classes.
FROM flink:2.2-java17

# Checkpoints, savepoints and HA metadata go to S3-compatible storage. The Hadoop-based plugin, because its
# credential chain reads AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY from the environment, which is how the
# FlinkDeployments hand it the keys from a Secret; cp fails the build if the image no longer ships the jar.
# The Prometheus reporter they configure is a plugin Flink's distribution enables already: ls fails the build
# should that change.
RUN mkdir -p /opt/flink/plugins/s3-fs-hadoop \
    && cp /opt/flink/opt/flink-s3-fs-hadoop-*.jar /opt/flink/plugins/s3-fs-hadoop/ \
    && ls /opt/flink/plugins/metrics-prometheus/flink-metrics-prometheus-*.jar

COPY --chown=flink:flink flink-click-job/target/flink-click-job-0.1.0-SNAPSHOT-job.jar /opt/tally/jobs/flink-click-job.jar
COPY --chown=flink:flink batch-reconcile/target/batch-reconcile-0.1.0-SNAPSHOT-job.jar /opt/tally/jobs/batch-reconcile.jar
