from explorer.app import main

raise SystemExit(main())
