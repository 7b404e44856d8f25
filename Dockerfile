# The remstore image: one static binary on an empty base, run as a non-root
# user, with a health check and no shell. It is built from a binary, not from
# source: scripts/image.sh builds one from the checkout (CGO_ENABLED=0) and
# then this file with podman or docker; a release uses GoReleaser's binary.
# What CI checks of it: docs/install.md ("The container image").
FROM scratch
# Root certificates, for a PostgreSQL server reached with sslmode=verify-full.
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# /data holds the embedded SQLite file (when REMSTORE_DB is not a URL) and
# audit dumps; it is the one writable place and a volume.
COPY --chown=65532:65532 data /data
COPY remstore /usr/local/bin/remstore
ENV REMSTORE_ADDR=0.0.0.0:8088 \
    REMSTORE_DB=/data/remstore.db \
    HOME=/data
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 8088
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
    CMD ["/usr/local/bin/remstore", "health"]
ENTRYPOINT ["/usr/local/bin/remstore"]
CMD ["serve"]
