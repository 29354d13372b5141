# Each failing test of the mocha runs in a log, on one line: its titles and the first line of its error.
/^ +[0-9]+ failing$/ { listing = 1; next }
/^# / || /^ +[0-9]+ passing/ { listing = 0 }
!listing { next }
/^  [0-9]+\) / { if (title != "") flush(); sub(/^  [0-9]+\) /, ""); title = $0; inTitle = 1; next }
inTitle && /^      +[^ ]/ { line = $0; sub(/^ +/, "", line); sub(/:$/, "", line); title = title " › " line; next }
inTitle && /^     [^ ]/ { line = $0; sub(/^ +/, "", line); error = line; flush(); next }
function flush() { print "failed: " substr(title " — " error, 1, 300); title = ""; error = ""; inTitle = 0 }
END { if (title != "") flush() }
