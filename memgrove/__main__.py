from memgrove.cli.fastpath import main

main()
