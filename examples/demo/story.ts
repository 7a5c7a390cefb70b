/** What a story of the demo hands back to `main`: what went wrong, and its line of the summary. */
export interface StoryResult {
  /** Anything unexpected: the demo then exits non-zero. */
  problems: string[]
  summary: string
}
