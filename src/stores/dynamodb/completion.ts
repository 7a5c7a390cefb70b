import type { StoredError } from '../../errors.js'
import type { AttributeNames } from './types.js'

/**
 * The update that makes a claimed record COMPLETED with its result: `complete`'s, and the one a
 * transaction ends with. Each caller adds its own fence (the lease token; a transaction also
 * requires IN_PROGRESS).
 */
export const completionUpdate = (n: AttributeNames, outcome: { expiry: number, responseData?: string }) => ({
  UpdateExpression: 'SET #status = :completed, #expiry = :expiry' +
    (outcome.responseData === undefined ? ' REMOVE #data, #error' : ', #data = :data REMOVE #error'),
  ExpressionAttributeNames: {
    '#status': n.statusAttr, '#expiry': n.expiryAttr, '#data': n.responseDataAttr, '#error': n.errorAttr
  },
  ExpressionAttributeValues: {
    ':completed': { S: 'COMPLETED' },
    ':expiry': { N: String(outcome.expiry) },
    ...(outcome.responseData === undefined ? {} : { ':data': { S: outcome.responseData } })
  }
})

/** The update that makes a claimed record FAILED with its error: `fail`'s, alone or grouped. */
export const failureUpdate = (n: AttributeNames, outcome: { expiry: number, error: StoredError }) => ({
  UpdateExpression: 'SET #status = :status, #expiry = :expiry, #error = :error REMOVE #data',
  ExpressionAttributeNames: {
    '#status': n.statusAttr, '#expiry': n.expiryAttr, '#error': n.errorAttr, '#data': n.responseDataAttr
  },
  ExpressionAttributeValues: {
    ':status': { S: 'FAILED' },
    ':expiry': { N: String(outcome.expiry) },
    ':error': {
      M: {
        name: { S: outcome.error.name },
        message: { S: outcome.error.message },
        ...(outcome.error.code === undefined ? {} : { code: { S: outcome.error.code } })
      }
    }
  }
})

/** The fence of complete, fail and release: only the claim's own lease token may write. */
export const leaseFence = (n: AttributeNames, leaseToken: string) => ({
  ConditionExpression: '#token = :token',
  ExpressionAttributeNames: { '#token': n.leaseTokenAttr },
  ExpressionAttributeValues: { ':token': { S: leaseToken } }
})
