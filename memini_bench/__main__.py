from memini_bench.cli import main

if __name__ == "__main__":
    main()
