#!/bin/bash
# Logging hook: hook.sh HOST EVENT [extra args...]
# Appends stdin/argv/env to $R/logs/HOST.hooks.log, saves the latest stdin per event in
# samples/HOST/EVENT.stdin.json (and env in EVENT.env), then prints outputs/HOST/EVENT[.VARIANT]
# (if any; VARIANT = 3rd argument).
R=/work/research30
HOST=${1:-unknown}; EVENT=${2:-unknown}; VAR=${3:+.$3}
mkdir -p "$R/logs" "$R/samples/$HOST"
IN=$(cat)
{
  echo "=== $(date +%FT%T.%N) host=$HOST event=$EVENT pid=$$ ppid=$PPID cwd=$PWD"
  echo "argv: $*"
  echo "stdin: $IN"
} >> "$R/logs/$HOST.hooks.log"
printf '%s' "$IN" > "$R/samples/$HOST/$EVENT.stdin.json"
env | sort > "$R/samples/$HOST/$EVENT.env"
if [ -f "$R/outputs/$HOST/$EVENT$VAR" ]; then cat "$R/outputs/$HOST/$EVENT$VAR"; fi
exit 0
