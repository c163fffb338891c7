-- Reserved: migration 0009 belongs to the card-level policies work (issue 14, branch h-policy),
-- built in parallel with 0010. The runner applies migrations in an unbroken sequence, so this
-- branch holds the number with a statement that changes nothing; on merging, the card-policies
-- branch's 0009 replaces this file (a database that applied this placeholder is a development
-- one: recreate it, since the runner refuses a migration changed after it was applied).
SELECT 1;
