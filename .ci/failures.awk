# Each failing test of the mocha runs in a log: its titles and the first line of its error on one line,
# then, indented, the rest of the error before its stack (a child process's output, a diff): all of it
# up to MORE lines, else its first and last MORE/2, where a process's last words are.
# Mocha lists a failure as "  N) " and its titles, one a line, the last ending in ":", then its error.
BEGIN { MORE = 12 }
/^ +[0-9]+ failing$/ { listing = 1; next }
/^# / || /^ +[0-9]+ passing/ { finish(); listing = 0 }
!listing { next }
/^  [0-9]+\) / { finish(); sub(/^  [0-9]+\) /, ""); add($0); next }
title != "" && !titled { add($0); next }
titled && error == "" && /[^ ]/ { error = $0; sub(/^ +/, "", error); next }
error != "" && /^ +at / { finish(); next }
error != "" && /[^ ]/ { rest[++extra] = "    " substr($0, 1, 300); next }
function add(line) { sub(/^ +/, "", line); if (sub(/:$/, "", line)) titled = 1; title = title == "" ? line : title " › " line }
function finish(    i, half) {
  if (title == "") return
  print "failed: " substr(title (error == "" ? "" : " — " error), 1, 300)
  half = MORE / 2
  for (i = 1; i <= extra; i++) {
    if (extra <= MORE || i <= half || i > extra - half) print rest[i]
    else if (i == half + 1) print "    … " (extra - MORE) " more line(s)"
  }
  title = ""; error = ""; titled = 0; extra = 0; split("", rest)
}
END { finish() }
