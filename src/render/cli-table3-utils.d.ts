// cli-table3 measures and cuts cells by terminal columns (wide characters count two, colour codes none);
// its helpers are used so that fitting a table to the width agrees with how cli-table3 lays it out.
declare module 'cli-table3/src/utils.js' {
  const utils: {
    strlen(text: string): number
    truncate(text: string, width: number, marker?: string): string
  }
  export default utils
}
