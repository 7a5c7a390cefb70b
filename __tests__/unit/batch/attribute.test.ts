import { describe, expect, test } from '@jest/globals'
import type { SQSRecord } from 'aws-lambda'
import { matchEach } from '../../../src/batch/attribute.js'
import type { ClaimedRecord } from '../../../src/batch/record-state.js'
import { sqs } from '../../../src/sources/sqs.js'
import { sqsRecord } from '../../support/sqs.js'

/** A claimed record as the matcher reads it: its record object and its identifier. */
const claimed = (record: SQSRecord): ClaimedRecord => ({ record, id: record.messageId }) as unknown as ClaimedRecord

describe('matchEach: which claimed record each record given stands for', () => {
  test('the record object wins over a copy met before it: the copy is the one left over', () => {
    const record = sqsRecord({ n: 1 })
    const state = claimed(record)
    expect(matchEach([state], [{ ...record }, record], sqs)).toEqual([`(${record.messageId}) is one of them twice`, state])
  })

  test('an identifier two claimed records share names neither (their records themselves still match)', () => {
    const first = sqsRecord({ n: 1 }, { messageId: 'same' })
    const second = sqsRecord({ n: 2 }, { messageId: 'same' })
    const run = [claimed(first), claimed(second)]
    expect(matchEach(run, [{ ...second }, { ...first }], sqs)).toEqual(['(same) is the identifier of two of them', '(same) is the identifier of two of them'])
    expect(matchEach(run, [second, first], sqs)).toEqual([run[1], run[0]])
  })

  test('a record without an identifier, or with another one, stands for none', () => {
    const record = sqsRecord({ n: 1 })
    expect(matchEach([claimed(record)], [{ body: record.body }, sqsRecord({ n: 2 }, { messageId: 'other' })], sqs))
      .toEqual(['has no identifier', '(other) is none of them'])
  })
})
