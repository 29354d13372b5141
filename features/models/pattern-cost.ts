// What a tenant's `pattern` costs RE2, read from its text before anything
// compiles it. RE2 runs in time proportional to its program's instructions
// times the text's length, and compiles in time proportional to the
// instructions; a counted repetition such as `.{1000}` repeats what it
// follows that many times in the program, so a pattern of a few bytes can
// compile to a million instructions. This count follows RE2's compiler and
// never falls below the program size it would build (a test holds it to
// that), so a pattern is refused on it without being compiled.

/** Instructions of what the parser has read in one group. */
interface Group {
  /** Completed alternatives, and the `|` between them. */
  done: number;
  /** The alternative being read. */
  branch: number;
  /** The last atom of the branch, which a repetition operator repeats. */
  last: number;
  /** A capturing group's two instructions. */
  extra: number;
}

/** RE2's own instructions around every program: the capture of the whole match, the match and the failure. */
const PROGRAM_OVERHEAD = 4;

/** The program size RE2 would compile `pattern` to, or more (never less); linear in the pattern's length. */
export function patternInstructions(pattern: string): number {
  const stack: Group[] = [{ done: 0, branch: 0, last: 0, extra: 0 }];
  let top = stack[0]!;
  const atom = (size: number) => {
    top.branch += size;
    top.last = size;
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      i = skipEscape(pattern, i, (literals) => atom(literals));
      continue;
    }
    if (c === '[') {
      i = skipClass(pattern, i);
      atom(1);
      continue;
    }
    if (c === '(') {
      const header = groupHeader(pattern, i);
      i = header.end;
      if (header.flagsOnly) atom(0);
      else {
        top = { done: 0, branch: 0, last: 0, extra: header.capturing ? 2 : 0 };
        stack.push(top);
      }
      continue;
    }
    i += 1;
    if (c === ')' && stack.length > 1) {
      const group = stack.pop()!;
      top = stack[stack.length - 1]!;
      atom(group.done + group.branch + group.extra);
    } else if (c === '|') {
      top.done += top.branch + 1;
      top.branch = 0;
      top.last = 0;
    } else if (c === '*' || c === '+' || c === '?') {
      top.branch += 1;
      top.last += 1;
      if (pattern[i] === '?') i += 1; // lazy
    } else if (c === '{') {
      const repeat = countedRepeat(pattern, i - 1);
      if (!repeat) atom(1);
      else {
        i = repeat.end;
        const times = Math.max(repeat.min, repeat.max ?? 1, 1);
        const repeated = top.last * times + (repeat.max === undefined ? 1 : repeat.max - repeat.min) + 1;
        top.branch += repeated - top.last;
        top.last = repeated;
        if (pattern[i] === '?') i += 1;
      }
    } else atom(1);
  }
  // An unclosed group is a syntax error the compiler gives; its instructions still count.
  let total = 0;
  for (const group of stack) total += group.done + group.branch + group.extra;
  return total + PROGRAM_OVERHEAD;
}

/** `{n}`, `{n,}` or `{n,m}` at `start`, or undefined when the brace is a literal. */
function countedRepeat(pattern: string, start: number): { min: number; max: number | undefined; end: number } | undefined {
  const match = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(start, start + 24));
  if (!match) return undefined;
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : match[3] === '' ? undefined : Number(match[3]);
  return { min, max, end: start + match[0].length };
}

/** Past a group's opening: `(`, `(?:`, `(?i:`, `(?P<name>`, `(?<name>`, or `(?i)` which opens nothing. */
function groupHeader(pattern: string, start: number): { end: number; capturing: boolean; flagsOnly: boolean } {
  if (pattern[start + 1] !== '?') return { end: start + 1, capturing: true, flagsOnly: false };
  let i = start + 2;
  if (pattern[i] === 'P') i += 1;
  if (pattern[i] === '<') {
    const close = pattern.indexOf('>', i);
    return { end: close < 0 ? pattern.length : close + 1, capturing: true, flagsOnly: false };
  }
  while (i < pattern.length && /[a-zA-Z-]/.test(pattern[i]!)) i += 1;
  if (pattern[i] === ')') return { end: i + 1, capturing: false, flagsOnly: true };
  return { end: pattern[i] === ':' ? i + 1 : i, capturing: false, flagsOnly: false };
}

/** Past a bracketed class, escapes and `[:name:]` included. */
function skipClass(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i += 1;
  if (pattern[i] === ']') i += 1;
  while (i < pattern.length && pattern[i] !== ']') {
    if (pattern[i] === '\\') i = skipEscape(pattern, i, () => undefined);
    else if (pattern.startsWith('[:', i)) {
      const close = pattern.indexOf(':]', i + 2);
      i = close < 0 ? i + 1 : close + 2;
    } else i += 1;
  }
  return i + 1;
}

/** Past an escape; `literals` gets its instructions (`\Q…\E` quotes one per character). */
function skipEscape(pattern: string, start: number, literals: (count: number) => void): number {
  const c = pattern[start + 1];
  if (c === 'Q') {
    const close = pattern.indexOf('\\E', start + 2);
    const end = close < 0 ? pattern.length : close;
    literals(end - (start + 2));
    return close < 0 ? end : close + 2;
  }
  literals(1);
  if ((c === 'p' || c === 'P' || c === 'x') && pattern[start + 2] === '{') {
    const close = pattern.indexOf('}', start + 3);
    return close < 0 ? pattern.length : close + 1;
  }
  if (c === 'p' || c === 'P') return start + 3;
  if (c === 'x') return start + 4;
  return start + 2;
}
