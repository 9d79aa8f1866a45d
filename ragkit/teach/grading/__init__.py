"""The teacher's grader: submitted notebooks run in the sandbox, judged by the exercises' own checks; the nbgrader
export; class-report over a class's results files. Everything a student wrote is read here as hostile input.
"""
