# redirect-web as a container: the runnable app jar on a Java 17 runtime, configured by TALLY_* variables
# (RedirectWebConfig). Build it from the repository's root after `./mvnw -pl redirect-web -am package -DskipTests`:
#
#     docker build -f deploy/kubernetes/redirect-web.Dockerfile -t tally-redirect-web:0.1.0 .
FROM eclipse-temurin:17-jre

RUN useradd --system --uid 10001 tally
COPY --chown=tally:tally redirect-web/target/redirect-web-0.1.0-SNAPSHOT-app.jar /opt/tally/redirect-web.jar
USER 10001
EXPOSE 8080
# The default heap is a quarter of the container's memory limit; the link cache and the producer buffer live there.
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75", "-jar", "/opt/tally/redirect-web.jar"]
