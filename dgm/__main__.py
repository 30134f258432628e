from dgm.commands.app import main

main()
