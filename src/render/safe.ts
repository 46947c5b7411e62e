// Control characters (C0 but tab and newline, DEL, C1), and the invisible format characters that reorder or hide
// text: zero-width (U+200B-U+200F), bidi embeddings and overrides (U+202A-U+202E), isolates (U+2066-U+2069),
// and the BOM/zero-width no-break space (U+FEFF) and word joiner (U+2060).
const CONTROL =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g

/**
 * Text from a record, a config, a file name or git, made safe to print for people (docs/security.md): every
 * control character but tab and newline (C0, DEL, C1, so every ESC) becomes a visible escape such as `\x1b`,
 * so a record cannot set the terminal's title, clear it or write the clipboard; bidi and zero-width characters
 * become `\u202e` and the like, so a record cannot make a table say something it does not.
 */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0)
    return code < 0x100
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`
  })
}

/** Like terminalSafe, and a newline too (one-line cells and messages). */
export function terminalSafeLine(text: string): string {
  return terminalSafe(text).replace(/\n/g, '\\n')
}
