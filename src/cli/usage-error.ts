/** A problem with how the command was called or set up (exit 2). */
export class UsageError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UsageError'
  }
}
