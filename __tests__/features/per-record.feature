Feature: Each record settles when its own work ends
  A record is COMPLETED the moment its own work ends, so a timeout in the middle of a
  batch re-runs only the records that had not finished; and work that is DynamoDB writes
  commits with its completion, so it takes effect exactly once.

  Scenario: A record hanging to the deadline re-runs alone
    Given an SQS order consumer written with perRecord
    And the downstream call for order "o-5" hangs
    When orders "o-1, o-2, o-3, o-4, o-5" arrive in one batch and the function times out
    Then the batch response reports only "o-5" as failed
    And orders "o-1, o-2, o-3, o-4" are COMPLETED and "o-5" is still IN_PROGRESS
    When the lease lapses and the batch is delivered again
    Then the batch response reports nothing as failed
    And only "o-5" ran a second time

  Scenario: An order and its stock reservation commit with the record, or not at all
    Given an SQS order consumer that places orders with transact
    And sku "kettle" has 1 unit left
    When orders "o-1:kettle, o-2:kettle" arrive in one batch
    Then the batch response reports only "o-2" as failed, because its stock condition failed
    And order "o-1" is placed and "o-2" is not, and 1 unit of "kettle" is reserved
    When the batch is delivered again
    Then order "o-1" is replayed without placing it again

  Scenario: A Kinesis consumer keeps each partition key in order
    Given a Kinesis consumer written with perRecord
    And event "a2" fails once
    When events "a1:A, b1:B, a2:A, b2:B, a3:A" arrive from the shard
    Then Lambda is told "a2, a3" failed
    When Lambda retries the shard from "a2"
    Then the response reports nothing as failed
    And "a2, a3" ran on the retry and "b2" was replayed

  Scenario: A Kafka consumer keeps each topic-partition in order and reports offsets
    Given a Kafka consumer written with perRecord
    And payment "p2" fails once
    When payments "p1:0, q1:1, p2:0, q2:1, p3:0" arrive from the cluster
    Then "p1, p2, q1, q2" ran and "p3" was held back behind "p2"
    And Lambda reads the failures as partition "payments-0" at offsets 1, 2
    And "p1, q1, q2" are COMPLETED and neither "p2" nor "p3" is kept in the store
    When Lambda resumes partition "payments-0" from offset 1
    Then the response reports nothing as failed
    And "p2, p3" ran on the retry and "p1" was not
