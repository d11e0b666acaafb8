#!/usr/bin/env bash
# pki.sh DIR: the test bed's certificates, as envtest's TinyCA makes them (ECDSA P-256, one CA): the API
# server's serving certificate, the admin's client certificate (group system:masters), the serving
# certificates of the four webhook servers (the policy's, CAPI's, the RKE2 control-plane manager's and
# k0smotron's), Crossplane's client certificate (core loads one for its composition-function client at
# start, though no function runs here), and the ServiceAccount signing key.
# Every serving certificate names 127.0.0.1 and localhost, which is where the API server calls them.
set -euo pipefail
P=$1
mkdir -p "$P"
key() { openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out "$1"; }
key "$P/ca.key"
openssl req -x509 -new -key "$P/ca.key" -subj /CN=testbed-ca -days 7 -out "$P/ca.crt" 2>/dev/null
# leaf NAME SUBJECT EXTENDED-KEY-USAGE [SUBJECT-ALT-NAMES]
leaf() {
  key "$P/$1.key"
  openssl req -new -key "$P/$1.key" -subj "$2" 2>/dev/null |
    openssl x509 -req -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -days 7 -out "$P/$1.crt" \
      -extfile <(printf 'keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n%s' \
        "$3" "${4:+subjectAltName=$4}") 2>/dev/null
}
leaf apiserver /CN=kube-apiserver serverAuth "IP:127.0.0.1,DNS:localhost"
leaf admin "/O=system:masters/CN=testbed-admin" clientAuth
leaf webhook /CN=policy-server serverAuth "IP:127.0.0.1,DNS:localhost"
leaf capi-webhook /CN=capi-webhook serverAuth "IP:127.0.0.1,DNS:localhost"
leaf rke2-webhook /CN=rke2-webhook serverAuth "IP:127.0.0.1,DNS:localhost"
leaf k0smotron-webhook /CN=k0smotron-webhook serverAuth "IP:127.0.0.1,DNS:localhost"
leaf crossplane-client /CN=crossplane clientAuth
key "$P/sa.key"
openssl pkey -in "$P/sa.key" -pubout -out "$P/sa.pub"
