// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * Text from a record, a config, a file name or git, made safe to print for people (docs/security.md): every
 * control character but tab and newline (C0, DEL, C1, so every ESC) becomes a visible escape such as `\x1b`,
 * so a record cannot set the terminal's title, clear it or write the clipboard.
 */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

/** Like terminalSafe, and a newline too (one-line cells and messages). */
export function terminalSafeLine(text: string): string {
  return terminalSafe(text).replace(/\n/g, '\\n')
}
