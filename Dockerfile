# Build: docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t eddy .
# Run:   docker run -p 6379:6379 -p 4222:4222 -v eddy-data:/data eddy
# VERSION is what the Makefile stamps too (eddy --version, INFO's
# eddy_version); .dockerignore keeps .git, bin/, data/ and the benchmark
# records out of the build context, so only the sources are copied.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so the download layer survives source changes.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/eddy ./cmd/eddy \
 && mkdir -p /out/data

# Static binary: no libc needed. nonroot (uid 65532) owns /data, so a fresh
# named volume is writable.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/eddy /eddy
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
EXPOSE 6379 4222
VOLUME /data
ENTRYPOINT ["/eddy", "server"]
CMD ["--bind", "0.0.0.0", "--nats-bind", "0.0.0.0", "--dir", "/data"]
