Feature: Per-record idempotency of an SQS batch
  Each record of a batch is its own unit of work, so a partial batch failure reports
  exactly the records that failed, and a redelivery charges nobody twice.

  Scenario: Only the record that really failed is reported
    Given an SQS payment consumer backed by DynamoDB
    And the card gateway declines payment "p-2"
    When payments "p-1, p-2, p-3" arrive in one batch
    Then the batch response reports only "p-2" as failed
    And payments "p-1, p-3" are COMPLETED and "p-2" has no record
    When the batch is delivered again and the gateway accepts "p-2"
    Then the batch response reports nothing as failed
    And each of "p-1, p-2, p-3" was charged exactly once

  Scenario: The same payment twice in one batch is charged once
    Given an SQS payment consumer backed by DynamoDB
    When payments "p-7, p-7, p-8" arrive in one batch
    Then the batch response reports nothing as failed
    And each of "p-7, p-8" was charged exactly once

  Scenario: A FIFO message group stops at its first record that cannot run
    Given an SQS payment consumer backed by DynamoDB
    And payment "f-1" of group "A" is being processed by another invocation
    When FIFO payments "f-1:A, f-2:A, g-1:B, f-3:A, g-2:B" arrive in one batch
    Then the batch response reports only "f-1, f-2, f-3" as failed
    And payments "g-1, g-2" are COMPLETED and "f-2, f-3" have no record
