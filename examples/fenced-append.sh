#!/bin/sh
# A resource that checks fencing tokens: appends a line to a file, but only for a writer whose
# token ($REDLOCK_FENCE, set by `redlock run --fence`) is higher than any token the file has
# accepted before. A writer that was paused past its lock's validity comes back with an old
# token and is refused, even though it still believes it holds the lock.
#
#   redlock run --key report --fence -- examples/fenced-append.sh /srv/report.log "line"
#
# The check and the write must be one atomic step on the resource's side; here a local flock
# on FILE.lock makes them so (a database would use a conditional UPDATE, Redis a Lua script).
set -eu
file=$1
line=$2
fence=${REDLOCK_FENCE:?run me under redlock run --fence}

exec 9>"$file.lock"
flock 9
last=$(cat "$file.fence" 2>/dev/null || echo 0)
if [ "$fence" -le "$last" ]; then
  echo "fenced-append: rejected token $fence: $file has seen $last" >&2
  exit 1
fi
printf '%s\n' "$fence" > "$file.fence"
printf '%s\n' "$line" >> "$file"
