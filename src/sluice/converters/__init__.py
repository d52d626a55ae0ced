"""converters"""
