from memgrove.fastpath import main

main()
