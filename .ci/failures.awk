# Each failing test of the mocha runs in a log, on one line: its titles and the first line of its error.
# Mocha lists a failure as "  N) " and its titles, one a line, the last ending in ":", then its error.
/^ +[0-9]+ failing$/ { listing = 1; next }
/^# / || /^ +[0-9]+ passing/ { listing = 0 }
!listing { next }
/^  [0-9]+\) / { if (title != "") flush(); sub(/^  [0-9]+\) /, ""); title = ""; add($0); next }
title != "" && !titled { add($0); next }
titled && /[^ ]/ { error = $0; sub(/^ +/, "", error); flush(); next }
function add(line) { sub(/^ +/, "", line); if (sub(/:$/, "", line)) titled = 1; title = title == "" ? line : title " › " line }
function flush() { print "failed: " substr(title " — " error, 1, 300); title = ""; error = ""; titled = 0 }
END { if (title != "") flush() }
