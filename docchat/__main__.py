from docchat.cli import main

main()
