const STORE = `Store (one of):
  --table NAME            DynamoDB table (region, credentials and AWS_ENDPOINT_URL_DYNAMODB as the AWS SDK reads them),
                          through @aws-sdk/client-dynamodb, or @aws-lite/client when only that one is installed
    --key-attr NAME         partition key attribute [idempotencyKey]
    --sort-key-attr NAME    sort key attribute, for a shared table [none]
    --sort-key-value VALUE  the records' sort key value [idempotency]
    The attribute names, when the store renames them (DynamoDBStore's option of the same name):
    --status-attr NAME  [status]            --expiry-attr NAME  [expiry]
    --in-progress-expiry-attr NAME  [inProgressExpiry]
    --lease-token-attr NAME  [leaseToken]   --payload-hash-attr NAME  [payloadHash]
    --response-data-attr NAME  [responseData]   --error-attr NAME  [error]
    An item without the attributes these name is not taken for a record: list skips it (and
    says how many it skipped), inspect and release refuse it.
  --redis URL             Redis or Valkey server (redis://host:6379, rediss://...); needs redis or ioredis installed
    --prefix PREFIX         the RedisStore's keyPrefix [none]
    A node of a Redis Cluster (an ElastiCache configuration endpoint) is seen as one: every
    primary is listed, and each key's commands go to the node that owns it.
  --timeout SECONDS       give up (exit 1) when the store has not answered for this long [10]`

const EXIT = 'Exit: 0 done, 1 refused or not found (or the store failed), 2 usage.'

/** The help of the bin and of each command. */
export const HELP = {
  main: `Usage: middy-idempotency <command> [options]

Operate on the records of middy-idempotency.

Commands:
  list     (--table NAME | --redis URL) [--status IN_PROGRESS|COMPLETED|FAILED] [--json]
           list the records
  inspect  KEY (--table NAME | --redis URL) [--json]
           show one record
  release  KEY (--table NAME | --redis URL) [--force] [--json]
           delete a FAILED record, or an IN_PROGRESS one whose lease lapsed
  release  KEY --completed [--yes] (--table NAME | --redis URL) [--json]
           delete a COMPLETED record, so that its work runs again (confirmed)
  create-table  --table NAME [--key-attr NAME] [--sort-key-attr NAME] [--expiry-attr NAME] [--json]
           create the store's DynamoDB table, with TTL on (local work, scripts)
  key      --event FILE [--key PATH] [--namespace NS] [--tenant T] [--json]
           the stored key of an event or of each record of a batch

Run middy-idempotency <command> --help for a command's options;
middy-idempotency --version prints the version.
${EXIT}`,
  list: `Usage: middy-idempotency list (--table NAME | --redis URL) [--status STATUS] [--json]

Lists the records, page by page (a DynamoDB Scan, a Redis SCAN cursor); a progress line on
stderr while it scans, when stderr is a terminal.
  --status STATUS   only IN_PROGRESS, COMPLETED or FAILED records
  --json            one JSON array on stdout

${STORE}
${EXIT}`,
  inspect: `Usage: middy-idempotency inspect KEY (--table NAME | --redis URL) [--json]

Shows one record: status, expiry, lease, payload hash, and a preview of its result or error.
KEY is the stored key (namespace#sha256...): the key command computes it from an event.
  --json   one JSON document on stdout (null when there is no record)

${STORE}
${EXIT} (1: no record under KEY)`,
  release: `Usage: middy-idempotency release KEY (--table NAME | --redis URL) [--force] [--json]
       middy-idempotency release KEY --completed [--yes] (--table NAME | --redis URL) [--json]

Deletes a FAILED record, or an IN_PROGRESS one whose lease has lapsed, so that the next delivery
runs its work. A live lease (the work may be running) is refused unless --force. A COMPLETED
record is released only with --completed. The delete is conditioned on the record's lease token
and status (and on the lease having lapsed): a record completed or claimed again meanwhile is
left alone.
  --force       release an IN_PROGRESS record whose lease is live
  --completed   release the COMPLETED record under KEY, and nothing else: its work runs again on
                the next delivery (a payment is charged again). At a terminal it shows the record
                and asks y/N; it then deletes only that record, not one that replaced it since
  --yes, -y     confirm --completed without asking (scripts; needed when not at a terminal)
  --json        one JSON document on stdout: { key, released, reason?, record? }

${STORE}
${EXIT} (1: refused, not confirmed, or no record under KEY; 2 also: --completed without --yes when not at a terminal)`,
  'create-table': 'Usage: middy-idempotency create-table --table NAME [--key-attr NAME] [--sort-key-attr NAME] ' +
    `[--expiry-attr NAME] [--json]

Creates the store's DynamoDB table for local work (DynamoDB Local: set AWS_ENDPOINT_URL_DYNAMODB)
and scripts: partition key --key-attr (S), sort key --sort-key-attr (S) when given, on-demand
(PAY_PER_REQUEST), TTL on --expiry-attr. Waits until the table is ACTIVE. A table that exists
with this schema is kept (exit 0), and its TTL turned on when it is off. A table with another
key schema, or TTL on another attribute, is left as it is (exit 1, naming each difference).
  --json   one JSON document on stdout: { tableName, created, ttl, partitionKey, sortKey?, ttlAttribute }

${STORE.split('\n  --redis')[0] as string}
${EXIT} (1: the table exists with another schema)`,
  key: `Usage: middy-idempotency key --event FILE [--key PATH] [--namespace NS] [--tenant T] [--json]

Prints the stored key of an event, as the middleware computes it: one key per record of a batch
(SQS, Kinesis, DynamoDB Streams, Kafka; a file with one record works too), with the source's
default key (an SQS record's messageId...); one key for any other event.
  --event FILE      the event (or record) as JSON
  --key PATH        the middleware's key option, when it is a path
  --namespace NS    the namespace option [AWS_LAMBDA_FUNCTION_NAME, else middy-idempotency]
  --tenant T        the invocation's tenant (context.tenantId), for a function in tenant isolation mode
  --json            one JSON document on stdout

${EXIT} (1: a record has no key)`
} as const
