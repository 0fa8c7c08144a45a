from memgrove.cli.app import main

main()
