/**
 * What Lambda reads of a function's answer. The Node.js runtime sends `JSON.stringify(answer)`
 * (`undefined` as `null`), and the event source mapping reads that JSON: a `toJSON` decides
 * what it sees, non-enumerable properties and array extras are not seen, and an answer JSON has
 * no text for (a BigInt, a cycle) is a function error. The simulators read only this, so an
 * answer that is Lambda's shape only as a JavaScript object is caught.
 */
export type LambdaRead = { readable: true, answer: unknown } | { readable: false, error: unknown }

export const lambdaReads = (response: unknown): LambdaRead => {
  try {
    const text = JSON.stringify(response === undefined ? null : response) as string | undefined
    // A function or a symbol as the whole answer has no JSON: the runtime sends nothing readable.
    if (text === undefined) return { readable: false, error: new Error(`the answer (${typeof response}) has no JSON`) }
    return { readable: true, answer: JSON.parse(text) }
  } catch (error) {
    return { readable: false, error }
  }
}
