#!/usr/bin/env bash
# ctest cli.completion_bash: drives the script `kernodeck completion bash` prints through bash's
# own completion machinery (complete -p, then the registered function with COMP_WORDS and
# COMP_CWORD as bash sets them), and checks what it offers against the commands' --help.
#   completion_check.sh KERNODECK [COMPLETION_FILE]
# With COMPLETION_FILE (the build's copy, which the Debian package installs), that file must be
# what the binary prints.
set -uo pipefail
k=$1
script=$("$k" completion bash) || { echo "kernodeck completion bash failed"; exit 1; }
if [ $# -ge 2 ] && [ "$script" != "$(cat "$2")" ]; then
  echo "$2 is not what 'kernodeck completion bash' prints"; exit 1
fi
eval "$script"
fails=0
spec=$(complete -p kernodeck) || { echo "no completion registered for kernodeck"; exit 1; }
fn=$(sed -n 's/.*-F \([^ ]*\) kernodeck$/\1/p' <<<"$spec")
[ -n "$fn" ] || { echo "complete -p kernodeck: no function ($spec)"; exit 1; }

# offers "WORDS..." -- EXPECTED...: completes the last word of WORDS; every EXPECTED must be offered.
# offers_not: none of them may be.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMP_LINE="$*"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  "$fn" kernodeck "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}
# in_reply WORD: whether COMPREPLY holds WORD. Not "printf | grep -q": under pipefail, grep's early
# exit on a first match can kill printf with SIGPIPE and fail the pipeline.
in_reply() {
  local w
  for w in "${COMPREPLY[@]}"; do [ "$w" = "$1" ] && return 0; done
  return 1
}
offers() {
  local words=() expected=()
  while [ "$1" != -- ]; do words+=("$1"); shift; done
  shift
  complete_words "${words[@]}"
  for e in "$@"; do
    if ! in_reply "$e"; then
      echo "FAIL: '${words[*]}' does not offer '$e' (offers: ${COMPREPLY[*]:0:12})"; fails=$((fails + 1))
    fi
  done
}
offers_not() {
  local words=()
  while [ "$1" != -- ]; do words+=("$1"); shift; done
  shift
  complete_words "${words[@]}"
  for e in "$@"; do
    if in_reply "$e"; then
      echo "FAIL: '${words[*]}' offers '$e'"; fails=$((fails + 1))
    fi
  done
}

offers kernodeck au -- audit
offers kernodeck '' -- audit gate probe reference dossier version completion help
offers kernodeck help '' -- audit fleet
offers kernodeck audit --fo -- --format
offers kernodeck audit --format '' -- text json sarif cyclonedx spdx html
offers kernodeck audit --format s -- sarif spdx
offers_not kernodeck audit --format s -- json text
offers kernodeck audit --format=c -- cyclonedx
offers kernodeck audit --fail-on '' -- info warning error none
offers kernodeck probe --expect '' -- cpu cuda rocm auto
offers kernodeck reference '' -- init show verify
offers kernodeck fleet '' -- plan run summary
offers kernodeck dossier '' -- build verify replay
offers kernodeck sample '' -- check
offers kernodeck sample check --ref -- --reference
offers kernodeck completion '' -- bash zsh
offers kernodeck version --j -- --json
offers_not kernodeck audit --pol -- --policy
# Every option of a command's --help is offered after "--", and nothing else.
for cmdline in "audit" "gate" "reference init" "fleet run" "version"; do
  read -ra words <<<"$cmdline"
  # The long options of each option line's head (up to its first two spaces): "  -o, --output FILE  ...".
  want=$("$k" "${words[@]}" --help | sed -n 's/^  \(-[^ ].*\)$/\1/p' | sed 's/  .*//' | grep -oE -- '--[A-Za-z0-9][A-Za-z0-9-]*' | sort -u)
  [ -n "$want" ] || { echo "FAIL: kernodeck $cmdline --help lists no option"; fails=$((fails + 1)); continue; }
  complete_words kernodeck "${words[@]}" --
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sort -u)
  if [ "$want" != "$got" ]; then
    echo "FAIL: kernodeck $cmdline --: offers"; diff <(echo "$want") <(echo "$got"); fails=$((fails + 1))
  fi
done
# A file name where an option takes a path.
tmp=$(mktemp -d)
touch "$tmp/key.pem"
offers kernodeck audit --sign-key "$tmp/k" -- "$tmp/key.pem"
rm -rf "$tmp"
if [ "$fails" -ne 0 ]; then echo "$fails completion checks failed"; exit 1; fi
echo "bash completion: all checks passed"
