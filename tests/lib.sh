# What the script tests (tests/profile.sh, tests/models.sh) share: run from the repository root,
# a scratch folder removed on exit ($tmp), and checks that print "ok NAME" or "FAIL NAME: why".
# Sourced, not run.
set -u
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

check() {  # check NAME GOT WANT
  if [ "$2" = "$3" ]; then echo "ok $1"; else echo "FAIL $1: got '$2', want '$3'"; fi
}
has() {  # has NAME TEXT WANT: WANT is a line of TEXT
  if printf '%s\n' "$2" | grep -qxF -- "$3"; then echo "ok $1"; else echo "FAIL $1: no line '$3' in:"; printf '%s\n' "$2" | sed 's/^/    /' | head -n 40; fi
}
contains() {  # contains NAME TEXT WANT: WANT is in TEXT
  case $2 in *"$3"*) echo "ok $1";; *) echo "FAIL $1: '$3' not in '$(printf '%s' "$2" | head -c 400)'";; esac
}
