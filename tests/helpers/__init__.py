"""What the test modules share, one module per topic. A test module imports from here or
from conftest, never from another test module: a test file's own helpers then change with
its tests alone, and a shared one says it is shared (issue 42, 4)."""
