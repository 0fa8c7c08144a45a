from memgrove.cli import main

main()
