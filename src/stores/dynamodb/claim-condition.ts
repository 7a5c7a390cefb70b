import type { AttributeNames } from './types.js'

/*
 * When a claim may write the record: no record protects its key. One condition for the claim's
 * `PutItem` and for the unclaimed commit of `effects: 'transact-only'`, which puts the COMPLETED
 * record on the claim's own condition: two spellings could drift, and a drift is a duplicate.
 * The sub-conditions, by name (the same judgement as `isClaimable`, on the server):
 */
/** No record under the key. */
const ABSENT = 'attribute_not_exists(#key)'
/** A record past its `expiry` (epoch seconds): DynamoDB's TTL deletes it days late, so it is judged here. */
const EXPIRED = '#expiry < :nowSeconds'
/** An IN_PROGRESS record whose lease (epoch milliseconds) has lapsed: its owner is taken to be gone. */
const LEASE_LAPSED = '(#status = :inProgress AND #lease < :nowMs)'

/**
 * When a claim may take over a record that exists: the claim's condition without ABSENT. The
 * grouped claim's fenced UPDATE (statements.ts) is this condition, spelt in PartiQL from here.
 */
export const takeoverCondition = (n: AttributeNames, nowMs: number) => ({
  ConditionExpression: `${EXPIRED} OR ${LEASE_LAPSED}`,
  ExpressionAttributeNames: { '#expiry': n.expiryAttr, '#status': n.statusAttr, '#lease': n.inProgressExpiryAttr },
  ExpressionAttributeValues: {
    ':nowSeconds': { N: String(Math.floor(nowMs / 1000)) },
    ':nowMs': { N: String(nowMs) },
    ':inProgress': { S: 'IN_PROGRESS' }
  }
})

/**
 * The claim's condition at `nowMs`, its names and values, and the standing record returned when
 * it fails (so a refused claim costs one request).
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html#DDB-PutItem-request-ReturnValuesOnConditionCheckFailure
 */
export const claimCondition = (n: AttributeNames, nowMs: number) => {
  const takeover = takeoverCondition(n, nowMs)
  return {
    ConditionExpression: `${ABSENT} OR ${takeover.ConditionExpression}`,
    ExpressionAttributeNames: { '#key': n.keyAttr, ...takeover.ExpressionAttributeNames },
    ExpressionAttributeValues: takeover.ExpressionAttributeValues,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const
  }
}
