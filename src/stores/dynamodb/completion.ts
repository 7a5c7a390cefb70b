import type { AttributeNames } from './types.js'

/**
 * The update that makes a claimed record COMPLETED with its result: `complete`'s, and the one a
 * transaction ends with. Each caller adds its own fence (the lease token; a transaction also
 * requires IN_PROGRESS).
 */
export const completionUpdate = (n: AttributeNames, outcome: { expiry: number, responseData?: string }) => ({
  UpdateExpression: 'SET #status = :completed, #expiry = :expiry' + (outcome.responseData === undefined ? ' REMOVE #data, #error' : ', #data = :data REMOVE #error'),
  ExpressionAttributeNames: { '#status': n.statusAttr, '#expiry': n.expiryAttr, '#data': n.responseDataAttr, '#error': n.errorAttr },
  ExpressionAttributeValues: {
    ':completed': { S: 'COMPLETED' },
    ':expiry': { N: String(outcome.expiry) },
    ...(outcome.responseData === undefined ? {} : { ':data': { S: outcome.responseData } })
  }
})
