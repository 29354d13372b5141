# shellcheck shell=bash
# The certificates and admin kubeconfig of a test control plane, shared by
# kube.sh and cluster.sh; sourced after lib.sh.

# ensure_pki DIR NAME SUBJECT_ALT_NAMES: a CA, an apiserver certificate for
# the names, one system:masters admin identity (a test cluster on one host)
# and service-account keys in DIR, unless they are there already.
ensure_pki() {
  local dir="$1" name="$2" sans="$3"
  [ -s "$dir/admin.crt" ] && [ -s "$dir/sa.pub" ] && return 0
  new_ca "$dir" "$name-ca"
  (
    cd "$dir"
    umask 077
    printf '%s\n' "subjectAltName=$sans" 'extendedKeyUsage=serverAuth' >server.ext
    sign_cert apiserver "/CN=kube-apiserver" server.ext
    printf '%s\n' 'extendedKeyUsage=clientAuth' >client.ext
    sign_cert admin "/O=system:masters/CN=$name-admin" client.ext
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
    openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
  )
  log "generated the CA, apiserver and admin certificates and service-account keys in $dir"
}

# new_ca DIR NAME: DIR emptied, with a fresh CA called NAME in it (ca.key, ca.crt).
new_ca() {
  command -v openssl >/dev/null 2>&1 || apt_install_once openssl
  rm -rf "$1"
  mkdir -p "$1"
  (cd "$1" && umask 077 && openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -keyout ca.key -out ca.crt -subj "/CN=$2" 2>/dev/null)
}

# ensure_server_cert DIR CA_NAME SUBJECT_ALT_NAMES: DIR's CA (made once and
# kept: it is what clients check against) and a server certificate for the
# names, signed again under the same CA when the names change. Sets
# CERT_SIGNED to 1 when it signed one (a running server must reload), else 0;
# it is not a test's condition, so that a failing openssl still stops the script.
ensure_server_cert() {
  local dir="$1" ca_name="$2" sans="$3"
  CERT_SIGNED=0
  [ -s "$dir/ca.crt" ] || new_ca "$dir" "$ca_name"
  if printf '%s\n' "subjectAltName=$sans" 'extendedKeyUsage=serverAuth' | cmp -s - "$dir/server.ext" && [ -s "$dir/server.crt" ]; then
    return 0
  fi
  (
    cd "$dir"
    umask 077
    printf '%s\n' "subjectAltName=$sans" 'extendedKeyUsage=serverAuth' >server.ext
    sign_cert server "/CN=localhost" server.ext
    chmod 644 ca.crt server.crt server.ext
  )
  CERT_SIGNED=1
}

# sign_cert NAME SUBJECT EXTFILE: NAME.key + NAME.crt signed by ca.crt.
sign_cert() {
  openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -extfile "$3" -out "$1.crt" 2>/dev/null
  rm -f "$1.csr"
}

# write_kubeconfig FILE DIR NAME SERVER: the admin identity of DIR for SERVER.
write_kubeconfig() {
  local file="$1" dir="$2" name="$3" server="$4" b64='base64 -w0'
  cat >"$file.tmp" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
  - name: $name
    cluster:
      server: $server
      certificate-authority-data: $($b64 <"$dir/ca.crt")
users:
  - name: $name-admin
    user:
      client-certificate-data: $($b64 <"$dir/admin.crt")
      client-key-data: $($b64 <"$dir/admin.key")
contexts:
  - name: $name
    context: { cluster: $name, user: $name-admin, namespace: default }
current-context: $name
KUBECONFIG
  chmod 600 "$file.tmp"
  mv -f "$file.tmp" "$file"
}
