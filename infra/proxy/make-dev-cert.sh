#!/bin/sh
# Makes a private CA and a certificate signed by it for the proxy, for trials and
# local development only (production uses a certificate from a public CA, e.g.
# ACME/Let's Encrypt, or the organisation's own).
#   infra/proxy/make-dev-cert.sh [OUT_DIR] [HOST...]
# Defaults: infra/proxy/tls, payment.localhost gateway.localhost. Writes
# OUT_DIR/tls.crt and tls.key (what the proxy mounts) and OUT_DIR/ca.crt: trust
# that file in your client (curl --cacert, NODE_EXTRA_CA_CERTS, the browser's
# certificate store) instead of turning verification off. The e2e tests make
# their throwaway certificates with this script too.
set -eu
out=${1:-"$(dirname "$0")/tls"}
[ "$#" -gt 0 ] && shift
[ "$#" -eq 0 ] && set -- payment.localhost gateway.localhost
days=${DEV_CERT_DAYS:-30}

mkdir -p "$out"
cd "$out"
umask 077
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
# shellcheck disable=SC2086
openssl req -x509 $ec -keyout ca.key -out ca.crt -days "$days" -subj "/CN=platform dev CA" 2>/dev/null
# shellcheck disable=SC2086
openssl req $ec -keyout tls.key -out tls.csr -subj "/CN=$1" 2>/dev/null
san=""
for host in "$@"; do san="${san:+$san,}DNS:$host"; done
cat > leaf.ext <<EXT
subjectAltName=$san
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
EXT
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days "$days" \
  -extfile leaf.ext -out tls.crt 2>/dev/null
rm -f tls.csr leaf.ext ca.srl ca.key
# Readable by the proxy's user inside the container (the files stay on this host).
chmod 644 tls.crt ca.crt
chmod 640 tls.key
echo "wrote $(pwd)/tls.crt, tls.key (for: $*) and ca.crt (trust this one)"
