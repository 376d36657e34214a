LatchkeyCommand.main()
