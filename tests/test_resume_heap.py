"""A long game resumes in a heap little larger than its history (rules_core/snapshot.py):
the board's heap after its code has no large blocks to spare (docs/performance.md)."""

from helpers import device_case_tests

test_device_case = device_case_tests("resume_heap_cases", interpreters=("micropython",))
