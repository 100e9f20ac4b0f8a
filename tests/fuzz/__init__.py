"""World-file fuzzer (issue 14, Deliver 5): a seeded mutator over the shipped and upstream worlds, a fork server that
runs each mutant in a child process under time and memory limits, and a campaign that sorts the outcomes into classes
and buckets. See ``tests/fuzz/README.md``; run it with ``make fuzz N=10000`` or ``python -m tests.fuzz``."""
