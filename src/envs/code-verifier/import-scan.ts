// Finds the `import` keyword in code before the sandbox compiles it. In a script, `import` can only
// be a dynamic import(), and V8 answers that through a host function (docs/security.md); so no code
// that could contain one reaches the sandbox. A conservative text scan, not a parser: it may refuse
// the word in a comment or a string, never the reverse.

/** `\uXXXX` and `\u{X…}` escapes, decoded so that an escaped spelling is seen as the word it spells. */
const ESCAPE = /\\u\{([0-9a-fA-F]+)\}|\\u([0-9a-fA-F]{4})/g;

function decodeEscapes(source: string): string {
  return source.replace(ESCAPE, (whole, braced: string | undefined, four: string | undefined) => {
    const cp = Number.parseInt(braced ?? four ?? "", 16);
    return cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
  });
}

/** A character that continues an identifier ($, _, letters, digits, marks; ZWNJ and ZWJ below). */
const ID_PART = /^[$\p{ID_Continue}]$/u;

function continuesIdentifier(ch: string | undefined): boolean {
  return ch !== undefined && (ch === "\u200c" || ch === "\u200d" || ID_PART.test(ch));
}

/**
 * True when `source` could hold the `import` keyword: the six letters (after decoding unicode
 * escapes) with no identifier character glued to either side. `important`, `reimport` and
 * `import_x` are identifiers, so they pass; `import(`, `import (`, `.import`, `// import` do not.
 * Sound because the sandbox cannot make code from strings: the text scanned is all the code it runs.
 * @example mentionsImport("import('fs')"); // true
 * @example mentionsImport("const important = 1;"); // false
 */
export function mentionsImport(source: string): boolean {
  const text = decodeEscapes(source);
  for (let at = text.indexOf("import"); at >= 0; at = text.indexOf("import", at + 1)) {
    if (!continuesIdentifier(codePointBefore(text, at)) && !continuesIdentifier(codePointAt(text, at + 6))) return true;
  }
  return false;
}

function codePointAt(text: string, at: number): string | undefined {
  const cp = text.codePointAt(at);
  return cp === undefined ? undefined : String.fromCodePoint(cp);
}

/** The whole code point that ends just before `at` (two UTF-16 units for a surrogate pair). */
function codePointBefore(text: string, at: number): string | undefined {
  if (at === 0) return undefined;
  const pair = at >= 2 && /[\ud800-\udbff]/.test(text[at - 2]) && /[\udc00-\udfff]/.test(text[at - 1]);
  return codePointAt(text, pair ? at - 2 : at - 1);
}
