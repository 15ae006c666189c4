/** A file's text, as Vite's `?raw` imports it (the docs' queries, checked against what the Worker writes). */
declare module "*?raw" {
  const text: string;
  export default text;
}
