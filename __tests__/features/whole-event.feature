Feature: Effectively-once processing of an event
  Lambda delivers events at least once. A handler made idempotent runs each event's
  business logic once, however often the event is delivered, and answers duplicates
  with the response of the first run.

  Scenario: A new event is processed and its record is COMPLETED
    Given an idempotent handler backed by DynamoDB
    When the event "order-1" is processed
    Then the business logic ran 1 time
    And the record of "order-1" is COMPLETED with the handler's response

  Scenario: A completed event is skipped when reprocessed
    Given an idempotent handler backed by DynamoDB
    And the event "order-2" was processed
    When the event "order-2" is processed
    Then the business logic ran 1 time
    And the invocation returned the stored response

  Scenario: A failed event is retried and then COMPLETED
    Given an idempotent handler backed by DynamoDB
    And the business logic fails on its first attempt
    When the event "order-3" is processed
    Then the invocation failed with the business error
    And there is no record of "order-3"
    When the event "order-3" is processed
    Then the business logic ran 2 times
    And the record of "order-3" is COMPLETED with the handler's response

  Scenario: Two concurrent attempts on a new event run it once
    Given an idempotent handler backed by DynamoDB
    When the event "order-4" is processed by 2 invocations at the same time
    Then the business logic ran 1 time
    And one invocation succeeded and the other was told the event is in progress (409)
