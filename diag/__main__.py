from __future__ import annotations

from diag.cli import main

if __name__ == "__main__":
    main()
